"""the-loop's pure core: values, policies, ledger rules, prompt text and ports."""
