# The trainer writes engine GGUF files and tokenizers, and derives its answers from the answer
# module's Bitext knowledge base.
target_link_libraries(hotline_train PUBLIC hotline_engine hotline_answer)
# The dense kernels are the trainer's inner loops: let the compiler unroll and vectorize them.
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/kernels.cc PROPERTIES COMPILE_OPTIONS "-O3")
