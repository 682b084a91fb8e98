"""Tests of the stage entry points (stages/), alone and end to end."""
