"""What the research views compute from a model's attention: head statistics, rollout and flow, the neuron view, two
maps compared, the showcase head, sentence embeddings."""
