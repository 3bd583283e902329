"""Strategy authoring: documents, templates, registries and revisions."""
