"""Knowledge graphs: KG embeddings (`embed-kg`, its embedders), the embeddings read back, and text <-> KG alignment."""
