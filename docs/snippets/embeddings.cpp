// docs/api.md: embeddings of several texts and their cosine similarity.
#include <string>
#include <vector>

#include <ember/ember.hpp>

float embeddings_example(const ember::Model& model) {
    // [snippet:embed]
    std::vector<std::string> texts = {"The cat sat on the mat.", "A cat is sitting on a rug.", "Stock prices fell."};
    // Mean pooling of the final hidden states, L2-normalised: one n_embd vector per text.
    std::vector<std::vector<float>> e = model.embed(texts, {.pooling = ember::EmbedOptions::Pooling::mean});
    float cosine = 0.0f;  // unit vectors: the dot product is the cosine similarity
    for (std::size_t k = 0; k < e[0].size(); ++k) cosine += e[0][k] * e[1][k];
    // [snippet:embed]
    return cosine;
}
