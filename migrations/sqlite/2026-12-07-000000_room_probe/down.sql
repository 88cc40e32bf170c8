DROP TABLE room_probe;
