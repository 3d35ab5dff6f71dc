# The Debian package of `hotline serve` (CPack, DEB generator): `scripts/package` builds it.
#   /usr/bin/hotline                                 the binary (stripped)
#   /usr/share/hotline/models, /usr/share/hotline/kb the shipped demo model and knowledge base
#   /usr/share/hotline/prometheus                    the alerting rules and a scrape config
#   /etc/hotline/hotline.yaml                        the default configuration (a conffile)
#   /lib/systemd/system/hotline.service              the sandboxed unit, run as user `hotline`
#   /usr/share/doc/hotline                           the operator's guide and the licences
# The maintainer scripts (deploy/debian/postinst, prerm, postrm) create the `hotline` system user
# and its state folder /var/lib/hotline and enable the unit.
if(NOT TARGET hotline)
  return()
endif()
# `cpack` installs what is built; it does not build everything first (scripts/package builds the
# binary).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

install(TARGETS hotline RUNTIME DESTINATION bin COMPONENT hotline)
install(FILES assets/models/demo-agent.q8_0.gguf assets/models/README.md
        DESTINATION share/hotline/models COMPONENT hotline)
install(FILES assets/kb/bitext_kb.csv assets/kb/README.md
        DESTINATION share/hotline/kb COMPONENT hotline)
install(FILES deploy/prometheus/hotline-alerts.yml deploy/prometheus/prometheus.yml
        DESTINATION share/hotline/prometheus COMPONENT hotline)
install(FILES docs/operations.md deploy/debian/copyright
        DESTINATION share/doc/hotline COMPONENT hotline)
install(FILES deploy/debian/hotline.yaml DESTINATION /etc/hotline COMPONENT hotline)
install(FILES deploy/debian/hotline.service DESTINATION /lib/systemd/system COMPONENT hotline)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hotline)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Hotline maintainers <hotline@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "voice agent server for call centres")
set(CPACK_PACKAGE_DESCRIPTION
    "Hotline answers phone calls (Twilio Media Streams, Asterisk AudioSocket): streaming speech\n recognition, answer caches, a knowledge base and a language model, streaming speech synthesis.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Besides the shared libraries: the recognizer's model, and adduser for the system user.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "pocketsphinx-en-us, adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server, haproxy, prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_SOURCE_DIR}/deploy/debian/conffiles;${CMAKE_SOURCE_DIR}/deploy/debian/postinst;${CMAKE_SOURCE_DIR}/deploy/debian/prerm;${CMAKE_SOURCE_DIR}/deploy/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
