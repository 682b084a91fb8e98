"""Tests, in folders that mirror pipeline/'s packages; what they share is in tests/support/."""
