"""finetune: the model fine-tuned on one GLUE task with one seed, and evaluated with the
Table 1 baselines."""
