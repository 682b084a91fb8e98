"""ablate: head and layer disabling sweeps, gradient head importance and pruning (Kovaleva et
al. Figs. 8-9; Michel et al.)."""
