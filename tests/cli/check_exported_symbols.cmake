# A shared libember exports the public API (classes and free functions of namespace ember, the C
# functions ember_*) and nothing internal: no symbol of an inner namespace (ember::gguf::,
# ember::model::, ...), none naming detail::, none of a pimpl (::Impl). Those still exist in the
# library, hidden.
#   cmake -DLIB=libember.so -P check_exported_symbols.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND nm -D --defined-only -C "${LIB}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${LIB}")
endif()
execute_process(COMMAND nm --defined-only -C "${LIB}" OUTPUT_VARIABLE all)

set(special "(typeinfo for |typeinfo name for |vtable for |guard variable for |VTT for )?")
string(REPLACE ";" "," dynamic "${dynamic}")  # C++ names never need ';', lists do
string(REPLACE "\n" ";" lines "${dynamic}")
set(errors "")
set(n_ember 0)
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^[0-9a-f]* *[A-Za-z] " "" name "${line}")
  if(name MATCHES "^${special}ember::")
    math(EXPR n_ember "${n_ember} + 1")
    # Public: members of ember's classes (CamelCase) and free functions of namespace ember.
    if(name MATCHES "^${special}ember::[a-z_0-9]+::" OR name MATCHES "::Impl[^A-Za-z_0-9]|::Impl$"
       OR name MATCHES "detail::")
      list(APPEND errors "${name}")
    endif()
  endif()
endforeach()
if(errors)
  string(REPLACE ";" "\n  " errors "${errors}")
  message(FATAL_ERROR "${LIB} exports internal symbols:\n  ${errors}")
endif()
foreach(expected "ember::Model::load(" "ember::Session::prefill(" "ember::Sampler::sample("
                 "typeinfo for ember::Error" "ember::logprobs(" "ember_model_load" "ember_session_generate")
  string(FIND "${dynamic}" "${expected}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${LIB} does not export ${expected}")
  endif()
endforeach()
string(FIND "${all}" "ember::gguf::File::open(" at)
if(at LESS 0)
  message(FATAL_ERROR "${LIB}: no hidden ember::gguf::File::open (is the check reading the right file?)")
endif()
message(STATUS "${LIB}: ${n_ember} exported C++ symbols, all public API")
