"""Configuration: the settings model and its sections, environment overrides, the built-in harness
profiles, the loader of the YAML file, and the generator of docs/config.md."""
