"""What the fine-tuning commands share (the epoch loop with checkpoints and exact resume) and the trainers of the retriever and the multi-vector linker."""
