"""The pattern classifier made of the cross-validation's own networks, against the final fits.

    python -m benchmarks.pattern_fold_classifier            # runs it; writes the record below
    python -m benchmarks.pattern_fold_classifier --table    # the kept record as Markdown

writes benchmarks/records/pattern_fold_classifier.csv (every score),
pattern_fold_classifier_seeds.csv (the seed check) and pattern_fold_classifier_cost.csv, and
prints whether the rule below holds.

Why
---
`patterns_train` trains 44 networks: 5 folds x 4 to cross-validate, then 12 on every labelled
map (the classifier) and 12 more (the seed-check ensemble). Neither round of the design study
found a cheaper network that kept its quality, so this study cuts the other term: the final
fits. The cross-validation's 20 networks already see every labelled map (each 4 of the 5
folds); averaged, they can be the classifier, and their two halves by seed the seed check.
The stage would then train 5 x 4 networks on 80% of the maps, 16 network passes over the
labelled set instead of 40. The out-of-fold predictions, which the CV scores and the claims'
correction read, do not change at all: the same folds, seeds and networks. What can change
is the classifier's quality on maps it never saw, and the seed check.

The plan (fixed before any network of this study was trained)
-------------------------------------------------------------
- An outer split of every labelled map of `patterns.labels_from`: 5 folds grouped by input
  example and stratified by label (`StratifiedGroupKFold`, seed `OUTER_SEED` = 2026). Each
  outer fold's test maps are seen by neither arm; every labelled map is tested once.
- On each outer fold's training maps, today's design (`conf/patterns/default.yaml`) trained
  as the stage trains it (2 workers, one network at a time), in two arms:
  * *final fits* (today's stage): 12 networks on all the training maps (seeds 42-53), the
    classifier, and 12 more (54-65), the seed check;
  * *from the folds* (the candidate): the stage's own cross-validation of the training maps
    (5 inner folds, seed 42, 4 networks per fold, seeds 42-45); the classifier averages all
    20 networks' probabilities; the seed check compares its two halves by seed, the networks
    of seeds 42-43 of each fold (10) against those of seeds 44-45 (10).
- Scored on each model's outer test maps, pooled over the outer folds: each arm's
  classifier's accuracy, Cohen's kappa, vertical's F1 and each class's recall, with 95%
  intervals that resample input examples (1000 resamples), and the paired difference
  *from the folds* minus *final fits* (`pattern_design.score_rows`). Also recorded, outside
  the rule: *from the folds*, one half (the 10 networks of seeds 42-43), as the classifier.
- The seed check on the same test maps: the share of maps the two seed ensembles of each arm
  label differently, and the largest change of a class share between them per model. The
  stage's own `seed_stability` (on the attention stores) is measured after the change.
- Cost: each arm's wall seconds of training over the five outer folds on 2 cores, and its
  network-map-epochs.
- The rule: *from the folds* replaces the final fits if, on each model's test maps (minilm_l6,
  mpnet_base), (a) the lower bound of the paired accuracy difference is >= -0.02 and so is the
  kappa difference's, and (b) vertical+diagonal recall and vertical's F1 are each no more than
  0.02 below the final fits'. Otherwise the final fits stay, and the table says by how much
  it missed.
"""
