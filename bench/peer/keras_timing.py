"""Seconds per epoch of a Keras fit, for the Keras peers (keras is passed in:
the peers import it late, after setting TensorFlow's log level)."""
import time


def epoch_timer(keras, times):
    """A callback that appends each epoch's wall seconds to the list `times`."""
    class EpochTimer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.t = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.t)

    return EpochTimer()
