"""framenet_data: the FrameNet 1.5 sentences that pass the paper's filter, for Figs. 3-4."""
