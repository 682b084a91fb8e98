"""What tests share and are not tests themselves: builders of tiny models and runs, reference
implementations to compare against (oracles/), helpers that run commands and repos, and data
files (fixtures/)."""
