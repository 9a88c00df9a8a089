# ember-chat --grammar / --json-schema / --json-object: the answer matches; a bad grammar or
# schema file is a usage error (exit 2) naming the file and the line; a missing file exits 1.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
ember_resolve_shared(MODEL)
file(WRITE "${WORK}/sentence.gbnf" "root ::= \",\" (\" \" [a-z]+){2,5} \".\"\n")
file(WRITE "${WORK}/bad.gbnf" "root ::= word\n\nword ::= [a-z\n")
file(WRITE "${WORK}/person.json" [=[{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "age": {"type": "integer", "minimum": 1, "maximum": 99}}, "required": ["name", "age"]}]=])
file(WRITE "${WORK}/bad.json" [=[{"type": "object", "properties": {"id": {"type": "uuid"}}}]=])

include(${CMAKE_CURRENT_LIST_DIR}/expect_failure.cmake)
expect_failure(2 "bad.gbnf: grammar: line 3, column 10: unclosed" -m "${MODEL}" --grammar "${WORK}/bad.gbnf" -p x)
expect_failure(2 "bad.json: JSON Schema at #/properties/id: unknown type" -m "${MODEL}" --json-schema "${WORK}/bad.json" -p x)
expect_failure(1 "missing.gbnf: the grammar file cannot be opened" -m "${MODEL}" --grammar "${WORK}/missing.gbnf" -p x)
expect_failure(2 "cannot be combined" -m "${MODEL}" --grammar "${WORK}/sentence.gbnf" --json-object -p x)

execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 100 --temp 0.8 --seed 3 --quiet -t 1
                        --grammar "${WORK}/sentence.gbnf"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^Once upon a time, [a-z]+( [a-z]+)+\\.\n$")
  message(FATAL_ERROR "--grammar: exit ${rc}, output '${out}'")
endif()
execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 200 --temp 0.8 --seed 5 --quiet -t 1
                        --json-schema "${WORK}/person.json"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^Once upon a time{ *\"name\" *: *\"[^\"]*\" *, *\"age\" *: *[1-9][0-9]? *}[ \n\t]*$")
  message(FATAL_ERROR "--json-schema: exit ${rc}, output '${out}'")
endif()
# Any object: its strings are unbounded, so only the start is certain within -n 60.
execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 60 --temp 0.8 --seed 5 --quiet -t 1 --json-object
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^Once upon a time{[ \n\t]*(\"|})")
  message(FATAL_ERROR "--json-object: exit ${rc}, output '${out}'")
endif()
