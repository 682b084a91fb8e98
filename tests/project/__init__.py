"""Checks of the repository as a whole: README, docs, tree text, typos, floors, test layout."""
