"""Library behind the stages: data, models, the attention engine and store, analyses, figures."""
