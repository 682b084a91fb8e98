"""dump_attention: every attention map of the pre-trained and fine-tuned model on one task."""
