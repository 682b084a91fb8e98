"""Head clustering (Clark et al. 2019, Sec. 6).

The distance between heads a and b is the Jensen-Shannon divergence of their attention
distributions, summed over every token (query) of every example:

    D(a, b) = Σ_examples Σ_i JS(A_a[i], A_b[i]),   JS(p, q) = H((p + q) / 2) - (H(p) + H(q)) / 2

on maps smoothed as for the entropy (pipeline.clark.entropy.smooth). Heads are embedded in
2-D by metric MDS of D (scikit-learn) and labelled by their dominant behaviour.

Whether heads of one layer behave alike (the paper's Fig. 6, left) is measured by

    same_layer_margin = (mean D over pairs of heads of different layers
                         - mean D over pairs of distinct heads of the same layer) / tokens,

with D summed over the examples and `tokens` the query tokens it sums over (nats per token;
> 0: heads of one layer are closer to each other than to heads of other layers). Both
means are linear in D, so each example contributes its own pair means and token count, and
the margin is bootstrapped over examples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.clark.entropy import smooth
from pipeline.core.stats import Interval, bootstrap_interval

BEHAVIOURS = ("previous", "next", "cls", "sep", "punct", "broad", "other")


def _entropy(p: np.ndarray) -> np.ndarray:
    return -(p * np.log(p)).sum(-1)


def js_divergence_sum(maps: np.ndarray) -> np.ndarray:
    """Σ over queries of JS(head a's row, head b's row), one example: maps [K, n, n] -> [K, K]."""
    p = smooth(maps.astype(np.float32))  # [K, n, n]; float32 logs are fast
    own = _entropy(p)  # [K, n]
    k = p.shape[0]
    out = np.zeros((k, k))
    for a in range(k):
        mixture = (p[a] + p[a:]) / 2  # [K - a, n, n]
        divergence = _entropy(mixture) - (own[a] + own[a:]) / 2  # [K - a, n]
        out[a, a:] = out[a:, a] = divergence.sum(-1)
    return out.clip(min=0)


def layer_pair_means(distances: np.ndarray, num_layers: int, num_heads: int) -> np.ndarray:
    """Mean distance over pairs of distinct heads of the same layer and over pairs of heads
    of different layers: distances [K, K] (K = L * H, heads in (layer, head) order) -> [2]."""
    layer = np.repeat(np.arange(num_layers), num_heads)  # [K]
    same = layer[:, None] == layer[None]  # [K, K]
    distinct = ~np.eye(len(layer), dtype=bool)
    return np.array([distances[same & distinct].mean(), distances[~same].mean()])


def same_layer_margin(
    pair_means: np.ndarray, tokens: np.ndarray, resamples: int, seed: int
) -> Interval:
    """The margin (module docstring) from each example's `layer_pair_means` [E, 2] and
    query tokens [E], with its 95% interval bootstrapped over the examples."""
    return bootstrap_interval(
        lambda means, counts: (means[:, 1].sum() - means[:, 0].sum()) / counts.sum(),
        pair_means,
        tokens,
        n_resamples=resamples,
        seed=seed,
    )


def embed(distances: np.ndarray, seed: int) -> np.ndarray:
    """2-D metric MDS of a precomputed distance matrix [K, K] -> [K, 2]."""
    from sklearn.manifold import MDS

    mds = MDS(n_components=2, metric="precomputed", init="classical_mds", random_state=seed)
    return mds.fit_transform(distances)


def behaviours(
    targets: pd.DataFrame, entropy: pd.DataFrame, focus: float, broad: float
) -> pd.DataFrame:
    """layer, head, behaviour: the target (previous, next, cls, sep, punct) taking the most
    attention if it takes at least `focus` on average; else `broad` if the head's entropy is
    at least `broad` times the uniform baseline's; else `other`.
    """
    wide = targets.pivot_table(index=["layer", "head"], columns="target", values="attention")
    focused = ["previous", "next", "cls", "sep", "punct"]
    merged = wide[focused].join(entropy.set_index(["layer", "head"]))
    top = merged[focused].idxmax(axis=1)
    label = np.where(merged[focused].max(axis=1) >= focus, top, "other")
    is_broad = (label == "other") & (merged["entropy"] >= broad * merged["uniform"])
    label = np.where(is_broad, "broad", label)
    return pd.DataFrame({"behaviour": label}, index=merged.index).reset_index()
