"""report: one offline HTML page with every figure, table and metric of the pipeline."""
