"""framenet: relation-specific heads with FrameNet (Kovaleva et al. Figs. 3-4)."""
