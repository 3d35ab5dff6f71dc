# System libraries of the answer module: SQLite (knowledge base and demo accounts; Debian's
# libsqlite3 is built with FTS5) and hiredis (shared answer store in Redis).
find_package(PkgConfig REQUIRED)
pkg_check_modules(HOTLINE_SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(HOTLINE_HIREDIS REQUIRED IMPORTED_TARGET hiredis)
target_link_libraries(hotline_answer PUBLIC PkgConfig::HOTLINE_SQLITE3 PkgConfig::HOTLINE_HIREDIS)
# OpenSSL's libcrypto: PBKDF2 for the PINs of the accounts database.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_link_libraries(hotline_answer PUBLIC OpenSSL::Crypto)
# The language-model interface (llm::LanguageModel, llm::Message) the answerer generates with.
target_link_libraries(hotline_answer PUBLIC hotline_llm)
