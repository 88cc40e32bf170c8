DROP TABLE tail_watches;
