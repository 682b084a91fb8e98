"""The attention-only dependency probe (Clark et al. 2019, Sec. 5).

Word i is the syntactic head of word j with probability

    p(i | j) ∝ exp( Σ_k  w_k α^k_ij + u_k α^k_ji ),

where α^k_ij is head k's attention from word i to word j (word maps, `pipeline.clark.words`)
and k runs over every head of every layer. Candidates are the words and ROOT (the [CLS]
position); the only parameters are w and u, trained with cross-entropy. Predictions are the
argmax candidate per word (no tree decoding); UAS leaves punctuation out, as the paper does.
Its baseline is the right-branching parse (every word's head is the next word, the last
word is the root), scored on the same words.

The attention-and-words variant makes the weights depend on the two words' static vectors
v (GloVe): w_k becomes w_k + W_k,:(v_i ⊕ v_j) and u_k becomes u_k + U_k,:(v_i ⊕ v_j), the
paper's formula plus a word-independent term; ROOT's vector is learned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from pipeline.clark.ud import Sentence
from pipeline.data.batching import length_grouped_batches


@dataclass(frozen=True)
class ProbeExample:
    """One sentence: attention features and gold heads."""

    features: torch.Tensor  # float16 [K, w + 1, w + 1]: every head's map over ROOT + words
    heads: torch.Tensor  # long [w]: 0-based candidate index of each word's head (0 = ROOT)
    scored: torch.Tensor  # bool [w]: words that count in UAS (not punctuation)
    vectors: torch.Tensor | None = None  # float [w + 1, d]: word vectors, ROOT's row zeros


def probe_example(
    sentence: Sentence, maps: torch.Tensor, vectors: np.ndarray | None = None
) -> ProbeExample:
    """From word maps [L, H, w + 2, w + 2] ([SEP] last), the gold tree and word vectors [w, d]."""
    features = maps[..., :-1, :-1].flatten(0, 1).half()  # [K, w + 1, w + 1]: [SEP] dropped
    scored = torch.tensor([tag != "PUNCT" for tag in sentence.upos])
    if vectors is not None:
        vectors = torch.cat([torch.zeros(1, vectors.shape[1]), torch.from_numpy(vectors)])
    return ProbeExample(features, torch.tensor(sentence.heads), scored, vectors)


class AttentionProbe(torch.nn.Module):
    """Scores s[j, i] = Σ_k w_k(i, j) α^k_ij + u_k(i, j) α^k_ji for dependent j, candidate i.

    Without word vectors (vector_dim 0) w_k and u_k are plain weights; with them they are
    w_k + W_k,:(v_i ⊕ v_j) and u_k + U_k,:(v_i ⊕ v_j).
    """

    def __init__(self, num_features: int, vector_dim: int = 0) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(num_features))  # weights of α_ij (head -> dep)
        self.u = torch.nn.Parameter(torch.zeros(num_features))  # weights of α_ji (dep -> head)
        self.vector_dim = vector_dim
        if vector_dim:
            # W = [W_head | W_dep] and U = [U_head | U_dep] act on v_i ⊕ v_j
            self.words = torch.nn.Linear(vector_dim, 4 * num_features, bias=False)
            torch.nn.init.zeros_(self.words.weight)
            self.root = torch.nn.Parameter(torch.zeros(vector_dim))

    def forward(
        self, features: torch.Tensor, valid: torch.Tensor, vectors: torch.Tensor | None = None
    ) -> torch.Tensor:
        """features [B, K, n, n], valid [B, n], vectors [B, n, d] -> log p(i | j) [B, j, i]."""
        head_to_dep = torch.einsum("k,bkij->bij", self.w, features)  # [B, n(i), n(j)]
        dep_to_head = torch.einsum("k,bkji->bij", self.u, features)
        if self.vector_dim:
            vectors = vectors.clone()
            vectors[:, 0] = self.root  # ROOT's learned vector
            w_i, w_j, u_i, u_j = self.words(vectors).chunk(4, dim=-1)  # 4 x [B, n, K]
            head_to_dep = head_to_dep + torch.einsum("bik,bkij->bij", w_i, features)
            head_to_dep = head_to_dep + torch.einsum("bjk,bkij->bij", w_j, features)
            dep_to_head = dep_to_head + torch.einsum("bik,bkji->bij", u_i, features)
            dep_to_head = dep_to_head + torch.einsum("bjk,bkji->bij", u_j, features)
        scores = (head_to_dep + dep_to_head).transpose(1, 2)  # [B, n(dependent j), n(candidate i)]
        eye = torch.eye(scores.shape[-1], dtype=torch.bool, device=scores.device)
        blocked = eye[None] | ~valid[:, None, :]  # a word is not its own head; no padding
        return torch.log_softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)


def _collate(examples: Sequence[ProbeExample]) -> tuple[torch.Tensor | None, ...]:
    """Pad to the longest: features float16 [B, K, n, n], valid, heads, scored [B, n],
    vectors [B, n, d] (None without word vectors)."""
    n = max(e.features.shape[-1] for e in examples)
    k = examples[0].features.shape[0]
    features = torch.zeros(len(examples), k, n, n, dtype=torch.float16)
    valid = torch.zeros(len(examples), n, dtype=torch.bool)
    heads = torch.zeros(len(examples), n, dtype=torch.long)
    scored = torch.zeros(len(examples), n, dtype=torch.bool)
    with_vectors = examples[0].vectors is not None
    vectors = torch.zeros(len(examples), n, examples[0].vectors.shape[1]) if with_vectors else None
    for b, e in enumerate(examples):
        m = e.features.shape[-1]  # ROOT + w words
        features[b, :, :m, :m] = e.features
        valid[b, :m] = True
        heads[b, 1:m] = e.heads
        scored[b, 1:m] = e.scored
        if with_vectors:
            vectors[b, :m] = e.vectors
    return features, valid, heads, scored, vectors


def _chunks(examples: Sequence[ProbeExample], batch_size: int, seed: int) -> list[list[int]]:
    """Indices of batches of sentences of similar length (little padding)."""
    return length_grouped_batches([e.features.shape[-1] for e in examples], batch_size, seed)


def _batches(examples: Sequence[ProbeExample], batch_size: int, seed: int) -> list[tuple]:
    """Padded batches of sentences of similar length."""
    return [_collate([examples[i] for i in chunk]) for chunk in _chunks(examples, batch_size, seed)]


def train_probe(
    examples: Sequence[ProbeExample],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
) -> AttentionProbe:
    """Fit w and u with Adam on cross-entropy over every non-ROOT word (punctuation included)."""
    torch.manual_seed(seed)
    vectors = examples[0].vectors
    probe = AttentionProbe(
        examples[0].features.shape[0], 0 if vectors is None else vectors.shape[1]
    )
    optimizer = torch.optim.Adam(probe.parameters(), lr=learning_rate)
    batches = _batches(examples, batch_size, seed)
    for _ in tqdm(range(epochs), desc="probe epochs", unit="epoch"):
        for b in torch.randperm(len(batches)).tolist():
            features, valid, heads, _, vectors = batches[b]
            log_probs = probe(features.float(), valid, vectors)  # [B, n, n]
            words = valid.clone()
            words[:, 0] = False  # ROOT has no head
            loss = -log_probs.gather(-1, heads[..., None])[..., 0][words].mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return probe


@torch.no_grad()
def sentence_hits(
    probe: AttentionProbe, examples: Sequence[ProbeExample], batch_size: int
) -> np.ndarray:
    """Per sentence, in the order of `examples`: the scored words (punctuation left out)
    whose argmax head is right, and the scored words: int [S, 2]."""
    hits = np.zeros((len(examples), 2), dtype=np.int64)
    for chunk in _chunks(examples, batch_size, seed=0):
        features, valid, heads, scored, vectors = _collate([examples[i] for i in chunk])
        predicted = probe(features.float(), valid, vectors).argmax(-1)  # [B, n]
        hits[chunk, 0] = ((predicted == heads) & scored).sum(-1).numpy()
        hits[chunk, 1] = scored.sum(-1).numpy()
    return hits


def right_branching_hits(examples: Sequence[ProbeExample]) -> np.ndarray:
    """The right-branching baseline's hits per sentence, as `sentence_hits`: int [S, 2].
    Every word's head is the next word; the last word, which has none, is the root."""
    hits = np.zeros((len(examples), 2), dtype=np.int64)
    for s, example in enumerate(examples):
        predicted = torch.arange(2, len(example.heads) + 2)  # candidate of the next word
        predicted[-1] = 0  # ROOT
        hits[s] = (
            int(((predicted == example.heads) & example.scored).sum()),
            int(example.scored.sum()),
        )
    return hits


def uas(hits: np.ndarray) -> float:
    """Unlabelled attachment score of per-sentence hits int [S, 2] (right, scored)."""
    return float(hits[:, 0].sum() / max(hits[:, 1].sum(), 1))


def probe_uas(probe: AttentionProbe, examples: Sequence[ProbeExample], batch_size: int) -> float:
    """Unlabelled attachment score of the argmax head, punctuation left out."""
    return uas(sentence_hits(probe, examples, batch_size))
