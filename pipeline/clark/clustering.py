"""Head clustering (Clark et al. 2019, Sec. 6).

The distance between heads a and b is the Jensen-Shannon divergence of their attention
distributions, summed over every token (query) of every example:

    D(a, b) = Σ_examples Σ_i JS(A_a[i], A_b[i]),   JS(p, q) = H((p + q) / 2) - (H(p) + H(q)) / 2

on maps smoothed as for the entropy (pipeline.clark.entropy.smooth). Heads are embedded in
2-D by metric MDS of D (scikit-learn) and labelled by their dominant behaviour.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.manifold import MDS

from pipeline.clark.entropy import smooth

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


def embed(distances: np.ndarray, seed: int) -> np.ndarray:
    """2-D metric MDS of a precomputed distance matrix [K, K] -> [K, 2]."""
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
