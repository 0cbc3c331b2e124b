"""The demo and the sandbox: `demo` runs a whole loop on the embedded sandbox tracker with the demo
harness (`harness`, a tiny interactive agent), and `sandbox` posts to that tracker by hand."""
