// SIGINT and SIGTERM ask the trainer to stop after the step it is in (and to
// write a checkpoint when it has a folder for them). The handler only
// records the signal; the training loop polls it between steps.
#pragma once

namespace axon::train_app {

// Installs the handlers for SIGINT and SIGTERM.
void install_stop_handlers();
// The signal that asked to stop, or 0.
int stop_signal();
// "SIGINT", "SIGTERM"
const char* signal_name(int sig);

}  // namespace axon::train_app
