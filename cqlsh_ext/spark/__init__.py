"""`cqlsh-ext spark`: the shell's statements on Apache Spark with the Spark Cassandra Connector
(docs/spark.md), and functions for people's own Spark jobs (cqlsh_ext.spark.udf).

pyspark comes with the `spark` extra (common.install says how to add it); nothing here imports it at
module level, so the package loads without it and says in one line what is missing.
"""
