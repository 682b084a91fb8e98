"""claims: each finding of the papers that the run can test, judged against the paper's
statement."""
