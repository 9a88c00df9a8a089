/* ember.h compiles as C99 (-std=c99 -Wall -Wextra -Wpedantic -Werror) and exposes what a C
 * program needs without any C++ header. */
#include "ember/ember.h"

int ember_c99_header_check(void);
int ember_c99_header_check(void) {
    ember_session_options o = ember_session_options_default();
    ember_generate_options g = ember_generate_options_default();
    return o.context + g.max_tokens + (int)EMBER_OK;
}
