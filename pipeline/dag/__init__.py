"""The DVC DAG as code: one declaration per stage (`declarations`), the project files each
stage's module imports (`imports`), and dvc.yaml generated from both (`dvc_yaml`)."""
