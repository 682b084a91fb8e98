"""The attention-only dependency probe (Clark et al. 2019, Sec. 5).

Word i is the syntactic head of word j with probability

    p(i | j) ∝ exp( Σ_k  w_k α^k_ij + u_k α^k_ji ),

where α^k_ij is head k's attention from word i to word j (word maps, `pipeline.clark.words`)
and k runs over every head of every layer. Candidates are the words and ROOT (the [CLS]
position); the only parameters are w and u, trained with cross-entropy. Predictions are the
argmax candidate per word (no tree decoding); UAS leaves punctuation out, as the paper does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from tqdm import tqdm

from pipeline.clark.ud import Sentence
from pipeline.data import length_grouped_order


@dataclass(frozen=True)
class ProbeExample:
    """One sentence: attention features and gold heads."""

    features: torch.Tensor  # float16 [K, w + 1, w + 1]: every head's map over ROOT + words
    heads: torch.Tensor  # long [w]: 0-based candidate index of each word's head (0 = ROOT)
    scored: torch.Tensor  # bool [w]: words that count in UAS (not punctuation)


def probe_example(sentence: Sentence, maps: torch.Tensor) -> ProbeExample:
    """From word maps [L, H, w + 2, w + 2] ([SEP] last) and the gold tree."""
    features = maps[..., :-1, :-1].flatten(0, 1).half()  # [K, w + 1, w + 1]: [SEP] dropped
    scored = torch.tensor([tag != "PUNCT" for tag in sentence.upos])
    return ProbeExample(features, torch.tensor(sentence.heads), scored)


class AttentionProbe(torch.nn.Module):
    """Scores s[j, i] = Σ_k w_k α^k_ij + u_k α^k_ji for each dependent j and candidate i."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(num_features))  # weights of α_ij (head -> dep)
        self.u = torch.nn.Parameter(torch.zeros(num_features))  # weights of α_ji (dep -> head)

    def forward(self, features: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """features [B, K, n, n], valid bool [B, n] -> log p(i | j) [B, n, n] indexed [b, j, i]."""
        head_to_dep = torch.einsum("k,bkij->bji", self.w, features)
        dep_to_head = torch.einsum("k,bkji->bji", self.u, features)
        scores = head_to_dep + dep_to_head  # [B, n(dependent j), n(candidate i)]
        eye = torch.eye(scores.shape[-1], dtype=torch.bool, device=scores.device)
        blocked = eye[None] | ~valid[:, None, :]  # a word is not its own head; no padding
        return torch.log_softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)


def _collate(examples: Sequence[ProbeExample]) -> tuple[torch.Tensor, ...]:
    """Pad to the longest: features float16 [B, K, n, n], valid, heads, scored [B, n]."""
    n = max(e.features.shape[-1] for e in examples)
    k = examples[0].features.shape[0]
    features = torch.zeros(len(examples), k, n, n, dtype=torch.float16)
    valid = torch.zeros(len(examples), n, dtype=torch.bool)
    heads = torch.zeros(len(examples), n, dtype=torch.long)
    scored = torch.zeros(len(examples), n, dtype=torch.bool)
    for b, e in enumerate(examples):
        m = e.features.shape[-1]  # ROOT + w words
        features[b, :, :m, :m] = e.features
        valid[b, :m] = True
        heads[b, 1:m] = e.heads
        scored[b, 1:m] = e.scored
    return features, valid, heads, scored


def _batches(examples: Sequence[ProbeExample], batch_size: int, seed: int) -> list[tuple]:
    """Padded batches of sentences of similar length (little padding)."""
    order = length_grouped_order([e.features.shape[-1] for e in examples], batch_size, seed)
    chunks = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return [_collate([examples[i] for i in chunk]) for chunk in chunks]


def train_probe(
    examples: Sequence[ProbeExample],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
) -> AttentionProbe:
    """Fit w and u with Adam on cross-entropy over every non-ROOT word (punctuation included)."""
    torch.manual_seed(seed)
    probe = AttentionProbe(examples[0].features.shape[0])
    optimizer = torch.optim.Adam(probe.parameters(), lr=learning_rate)
    batches = _batches(examples, batch_size, seed)
    for _ in tqdm(range(epochs), desc="probe epochs", unit="epoch"):
        for b in torch.randperm(len(batches)).tolist():
            features, valid, heads, _ = batches[b]
            log_probs = probe(features.float(), valid)  # [B, n, n]
            words = valid.clone()
            words[:, 0] = False  # ROOT has no head
            loss = -log_probs.gather(-1, heads[..., None])[..., 0][words].mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return probe


@torch.no_grad()
def probe_uas(probe: AttentionProbe, examples: Sequence[ProbeExample], batch_size: int) -> float:
    """Unlabelled attachment score of the argmax head, punctuation left out."""
    correct = total = 0
    for features, valid, heads, scored in _batches(examples, batch_size, seed=0):
        predicted = probe(features.float(), valid).argmax(-1)  # [B, n]
        correct += int((predicted == heads)[scored].sum())
        total += int(scored.sum())
    return correct / max(total, 1)
