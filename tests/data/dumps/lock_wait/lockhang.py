import threading, time

lock = threading.Lock()


def holder():
    with lock:
        x = 0
        while True:
            x += 1


t = threading.Thread(target=holder, name="checkpoint-writer", daemon=True)
t.start()
time.sleep(0.5)


def train_step():
    with lock:
        pass


train_step()
