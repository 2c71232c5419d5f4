// A shared library named like a plugin that exports no axon_plugin_get_api.
extern "C" __attribute__((visibility("default"))) int not_an_axon_plugin() { return 42; }
