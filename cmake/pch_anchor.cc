// The one file of the targets that only precompile headers for others (cmake/precompiled_headers.cmake).
int main() { return 0; }
