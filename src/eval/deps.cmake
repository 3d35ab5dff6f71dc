# The benchmark's JSON report.
find_package(nlohmann_json REQUIRED)
target_link_libraries(hotline_eval PRIVATE nlohmann_json::nlohmann_json)
