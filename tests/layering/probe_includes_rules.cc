// Must NOT compile: probe sits below rules.
#include "rules/finding.h"
int main() {
  return 0;
}
