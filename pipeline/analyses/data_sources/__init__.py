"""data_sources: the offline data sets checked, and a digest of the files each reader reads."""
