"""The versions of the real agents the-loop is pinned against: the tests pin their behaviour, `doctor`
warns on any other, and scripts/install_<agent>.py installs exactly these.

The one place they are written. A new version needs its packages' integrities in its installer too
(the installer refuses a package that does not match). This file imports nothing and runs nothing:
the installers read it by its path, with the system Python, before the project is installed.
"""

PINNED_CLAUDE_CODE = "2.1.328"  # scripts/install_claude_code.py
PINNED_CODEX = "0.169.0"  # scripts/install_codex.py
PINNED_GEMINI_CLI = "0.61.0"  # scripts/install_gemini.py
PINNED_OPENCODE = "1.18.33"  # scripts/install_opencode.py
PINNED_COPILOT = "1.0.102"  # scripts/install_copilot.py
