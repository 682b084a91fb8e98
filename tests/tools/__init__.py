"""Tests of the manual tools (tools/)."""
