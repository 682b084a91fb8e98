"""analyze: Kovaleva et al. Figs. 5, 6, 7 and 10 for one task, from its attention store."""
