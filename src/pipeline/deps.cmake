# JSON for the events a session hands its sink (transcripts, ledgers) and SQLite for the
# per-call record (the answer module already links sqlite3 publicly).
find_package(nlohmann_json REQUIRED)
target_link_libraries(hotline_pipeline PRIVATE nlohmann_json::nlohmann_json)
