"""patterns_train: the attention-pattern classifier, trained on maps labelled by eye
(Kovaleva et al. Sec. 4.1)."""
