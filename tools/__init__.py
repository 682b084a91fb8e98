"""Commands a person runs by hand, outside the DVC DAG: the install's bytecode compilation,
params.yaml's composition, Hydra's schema plugin, and the pattern-labelling tools (the
annotation page, drawing maps to label, scoring a classifier on labelled maps)."""
