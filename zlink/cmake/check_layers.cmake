# Fails when a source file includes a header from a layer above its own.
#   cmake -DSRC=<zlink/src> -P check_layers.cmake
# Layers, bottom up (zlink/README.md "Layers" shows the same picture):
#   wire       the ZMTP codec: includes only wire/
#   core       msg, pipes, mailbox, socket_base, ctx, IO threads: core/ and wire/
#              (options hold security settings as wire types, keys in Z85)
#   sockets    socket types and routing policies: core/, wire/, sockets/
#   transport  tcp/ipc/inproc, session, engine: core/, wire/, transport/
#   api        the zmq.h facade: core/, wire/, api/
# sockets and transport never see each other; the core reaches both only
# through the tables it declares (core/socket_registry.hpp, core/transport.hpp).
# Includes without a folder ("x.hpp") are the file's own folder; the public
# headers zmq.h and zlink.h may be included anywhere.
cmake_minimum_required(VERSION 3.16)
if(NOT SRC)
  message(FATAL_ERROR "check_layers.cmake: pass -DSRC=<path to zlink/src>")
endif()
set(allowed_wire wire)
set(allowed_core core wire)
set(allowed_sockets core wire sockets)
set(allowed_transport core wire transport)
set(allowed_api core wire api)

set(violations "")
file(GLOB layers RELATIVE ${SRC} ${SRC}/*)
foreach(layer IN LISTS layers)
  if(NOT IS_DIRECTORY ${SRC}/${layer})
    continue()
  endif()
  if(NOT DEFINED allowed_${layer})
    list(APPEND violations "${layer}/: a folder the layer table does not know (add it to cmake/check_layers.cmake)")
    continue()
  endif()
  file(GLOB_RECURSE files ${SRC}/${layer}/*.hpp ${SRC}/${layer}/*.cpp ${SRC}/${layer}/*.h)
  foreach(f IN LISTS files)
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+/[^\"]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"/]+)/.*$" "\\1" target "${line}")
      if(NOT target IN_LIST allowed_${layer})
        file(RELATIVE_PATH rel ${SRC} ${f})
        list(APPEND violations "${rel}: ${line} (${layer}/ may include: ${allowed_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "upward or sideways includes:\n  ${text}")
endif()
message(STATUS "layering: every include goes to the same or a lower layer")
