"""prepare: each selected GLUE task's labelled splits, written as Parquet under data/glue/."""
