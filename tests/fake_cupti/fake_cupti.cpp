// placeholder; the capture work replaces this with the libcupti test double
extern "C" int fake_cupti_placeholder() { return 0; }
