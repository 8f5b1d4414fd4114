"""Loopback fakes of the external APIs the project talks to, speaking their real wire protocols."""
