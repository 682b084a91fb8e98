"""The declaration of analysis across_models (pipeline/analyses/analysis.py)."""

from __future__ import annotations

from pipeline.analyses.analysis import Analysis, Section

# No stage: `python -m pipeline.claims.across_models` writes outputs/plots/across_models/ from
# several DVC experiments (one per model), which no stage of one run can read. The report
# shows that folder like a stage's, so its heading is declared here, as an analysis with a
# section and no stage, rather than as a special case in the report package.
ANALYSIS = Analysis(
    section=Section(
        "Claims across models: one DVC experiment per model",
        20,
    ),
)
