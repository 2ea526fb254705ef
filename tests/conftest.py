"""Shared by every pytest folder under tests/.

A shell that starts a command in the background without job control (`pytest ... &` in a
script) starts it with SIGINT ignored, and a child inherits an ignored signal across exec: the
tests that send Ctrl-C to `fpgaprof run` and its program would then test a program that cannot
see it. The suite restores Python's own handler, so its children start with SIGINT at its
default, as under a terminal, however the suite was launched."""

from __future__ import annotations

import signal

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
