(* Drafts without replacement: docs/theory.md section 2.2, Lemma 2.6 (the
   marginal gain per unit of mass increases) and Theorem 2.7 (sorted prefixes
   suffice without replacement).

   g k S U is the probability that the first k draws without replacement from the
   tokens of U, with probabilities proportional to q, all lie in S; it is defined by
   the first-draw recursion (R) of docs/theory.md:
     g 0 S U = 1,
     g (k+1) S U = sum over z in S of q(z)/q(U) * g k (S \ {z}) (U \ {z}),
   so that D_without(set \subset S) = g k S Omega for WithoutReplacement(q, k).
   (mathcomp's x / 0 = 0 makes g k S U = 0 when fewer than k tokens of U have
   q > 0; the facts below hold with that convention, without support conditions.)

   Proved here from (R) alone, over every real field and every finite token type:
   - the monotonicity facts (M0) in S, (M1) adding a token to S and U, (M2) adding a
     token to U only, and (M3) in k ([g_monoS], [g_addSU], [g_addU], [g_monok]);
   - Lemma 2.6, multiplied out: for S \subset U and distinct x, y in U \ S with
     q x, q y > 0,
       q y * (g k (S + x) U - g k S U) <= q x * (g k (S + x + y) U - g k (S + x) U)
     ([marginal_gain_increases]);
   - Theorem 2.7: for tokens 0..n-1 sorted by p/q ascending (q = 0 last), the
     minimum over all S of p(S) + 1 - g k S Omega is attained at a prefix
     ([wor_sorted_prefixes_min]), by the exchange argument of SortedPrefixes.v
     with Lemma 2.6 in place of convexity. *)
From mathcomp Require Import all_ssreflect all_algebra.
From OptAccept Require Import Gale SortedPrefixes.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section WithoutReplacement.

Variables (R : realFieldType) (T : finType) (q : T -> R).
Hypothesis q_ge0 : forall y, 0 <= q y.

(* q(U) *)
Definition qm (U : {set T}) := \sum_(u in U) q u.

(* P(the first k draws without replacement from U, proportional to q, all lie in S) *)
Fixpoint g (k : nat) (S U : {set T}) : R :=
  if k is k'.+1 then \sum_(z in S) q z / qm U * g k' (S :\ z) (U :\ z) else 1.

(* the gain of adding x to S *)
Definition dg k x S U := g k (x |: S) U - g k S U.

Lemma qm_ge0 (U : {set T}) : 0 <= qm U.
Proof. exact: sumr_ge0. Qed.

Lemma qm_sub (S U : {set T}) : S \subset U -> qm S <= qm U.
Proof. exact: sum_subset. Qed.

Lemma coef_ge0 z (U : {set T}) : 0 <= q z / qm U.
Proof. by rewrite divr_ge0 ?qm_ge0. Qed.

Lemma g_ge0 k (S U : {set T}) : 0 <= g k S U.
Proof.
elim: k S U => [|k IH] S U /=; first exact: ler01.
by apply: sumr_ge0 => z _; rewrite mulr_ge0 ?coef_ge0.
Qed.

(* a set U of mass 0: no draw is possible *)
Lemma g_qm0 k (S U : {set T}) : qm U = 0 -> g k.+1 S U = 0.
Proof. by move=> U0; rewrite /= big1 // => z _; rewrite U0 invr0 mulr0 mul0r. Qed.

Lemma setD1U1C (S : {set T}) x z : z != x -> (x |: S) :\ z = x |: (S :\ z).
Proof.
move=> zx; apply/setP => t; rewrite !inE.
by case: (eqVneq t x) => [->|tx] /=; rewrite ?andbT // (eq_sym x) zx.
Qed.

(* (M0): g is non-decreasing in S *)
Lemma g_monoS k (S S' U : {set T}) : S \subset S' -> g k S U <= g k S' U.
Proof.
elim: k S S' U => [|k IH] S S' U SS' /=; first exact: lexx.
apply: le_trans (_ : \sum_(z in S) q z / qm U * g k (S' :\ z) (U :\ z) <= _).
  apply: ler_sum => z _; apply: ler_wpmul2l; first exact: coef_ge0.
  by apply: IH; apply: setSD.
apply: (@sum_subset _ _ (fun z => q z / qm U * g k (S' :\ z) (U :\ z))) => // z.
by rewrite mulr_ge0 ?coef_ge0 ?g_ge0.
Qed.

(* (M3): one more draw can only make "all draws in S" less likely *)
Lemma g_monok k (S U : {set T}) : S \subset U -> g k.+1 S U <= g k S U.
Proof.
elim: k S U => [|k IH] S U SU.
  rewrite /= (eq_bigr (fun z => q z / qm U)) => [|z _]; last by rewrite mulr1.
  rewrite -mulr_suml; have [U0|U0] := eqVneq (qm U) 0.
    by rewrite U0 invr0 mulr0 ler01.
  rewrite ler_pdivr_mulr ?mul1r; first exact: qm_sub.
  by rewrite lt_def U0 qm_ge0.
rewrite [g k.+2 S U]/= [g k.+1 S U]/=; apply: ler_sum => z _.
apply: ler_wpmul2l; first exact: coef_ge0.
by apply: IH; apply: setSD.
Qed.

(* (M2): adding a token w to U only (w not in U) can only lower g *)
Lemma g_addU k (S U : {set T}) w : S \subset U -> w \notin U -> g k S (w |: U) <= g k S U.
Proof.
elim: k S U => [|k IH] S U SU wU /=; first exact: lexx.
have [U0|U0] := eqVneq (qm U) 0.
  rewrite big1 ?sumr_ge0 // => [z _|z zS]; first by rewrite mulr_ge0 ?coef_ge0 ?g_ge0.
  suff -> : q z = 0 by rewrite !mul0r.
  apply/le_anti; rewrite q_ge0 andbT -U0.
  have h := @qm_sub [set z] U; rewrite /qm big_set1 in h; apply: h.
  by rewrite sub1set (subsetP SU).
have Upos : 0 < qm U by rewrite lt_def U0 qm_ge0.
apply: ler_sum => z zS.
have zw : z != w by apply: contraNneq wU => <-; apply: (subsetP SU).
rewrite setD1U1C //; apply: ler_pmul; rewrite ?coef_ge0 ?g_ge0 //.
  apply: ler_wpmul2l => //; rewrite lef_pinv ?posrE //.
    by apply: qm_sub; apply: subsetUr.
  by apply: lt_le_trans Upos _; apply: qm_sub; apply: subsetUr.
apply: IH; first exact: setSD.
by rewrite !inE negb_and wU orbT.
Qed.

(* (M4): a token of mass 0 changes nothing *)
Lemma g_add0 k (S U : {set T}) w : q w = 0 -> w \notin S -> g k (w |: S) U = g k S U.
Proof.
elim: k S U => [|k IH] S U w0 wS //=.
rewrite big_setU1 //= w0 mul0r mul0r add0r; apply: eq_bigr => z zS.
have zw : z != w by apply: contraNneq wS => <-.
by rewrite setD1U1C // IH // !inE negb_and wS orbT.
Qed.

(* (M1): adding a token w to both S and U (w not in U) can only raise g *)
Lemma g_addSU k (S U : {set T}) w : S \subset U -> w \notin U -> g k S U <= g k (w |: S) (w |: U).
Proof.
elim: k S U => [|k IH] S U SU wU; first exact: lexx.
have wS : w \notin S by apply: contra wU; apply: (subsetP SU).
have [U0|U0] := eqVneq (qm U) 0; first by rewrite g_qm0 // g_ge0.
have Upos : 0 < qm U by rewrite lt_def U0 qm_ge0.
have qmU1 : qm (w |: U) = q w + qm U by rewrite /qm big_setU1.
have U1pos : 0 < qm (w |: U) by rewrite qmU1 ltr_paddl.
rewrite [g k.+1 (w |: S) _]/= big_setU1 //= setU1K // setU1K //.
(* the draws from S first: each term only grows *)
have h1 : \sum_(z in S) q z / qm (w |: U) * g k (S :\ z) (U :\ z) <=
          \sum_(z in S) q z / qm (w |: U) * g k ((w |: S) :\ z) ((w |: U) :\ z).
  apply: ler_sum => z zS; apply: ler_wpmul2l; first exact: coef_ge0.
  have zw : z != w by apply: contraNneq wS => <-.
  rewrite !setD1U1C //; apply: IH; first exact: setSD.
  by rewrite !inE negb_and wU orbT.
apply: le_trans _ (ler_add (lexx _) h1).
have e : \sum_(z in S) q z / qm (w |: U) * g k (S :\ z) (U :\ z) =
         qm U / qm (w |: U) * g k.+1 S U.
  rewrite /= mulr_sumr; apply: eq_bigr => z _.
  by rewrite mulrA [qm U / _ * _]mulrC mulrA divfK.
rewrite e; apply: le_trans
  (_ : _ <= q w / qm (w |: U) * g k.+1 S U + qm U / qm (w |: U) * g k.+1 S U) _.
  by rewrite -mulrDl -mulrDl -qmU1 divff ?mul1r // gt_eqF.
by rewrite ler_add2r ler_wpmul2l ?coef_ge0 ?g_monok.
Qed.

(* the first-draw decomposition of a gain, multiplied by q(U) *)
Lemma dg_decomp k x (S U : {set T}) : x \notin S -> qm U != 0 ->
  qm U * dg k.+1 x S U =
  q x * g k S (U :\ x) + \sum_(z in S) q z * dg k x (S :\ z) (U :\ z).
Proof.
move=> xS U0.
have key a (X : R) : qm U * (a / qm U * X) = a * X.
  by rewrite mulrA [qm U * _]mulrCA divff // mulr1.
rewrite /dg [g k.+1 (x |: S) U]/= [g k.+1 S U]/= big_setU1 //= setU1K //.
rewrite mulrBr mulrDr key !mulr_sumr -addrA; congr (_ + _).
rewrite -sumrB; apply: eq_bigr => z zS.
have zx : z != x by apply: contraNneq xS => <-.
by rewrite !key setD1U1C // mulrBr.
Qed.

(* docs/theory.md, Lemma 2.6 (multiplied by q(x) q(y) > 0): adding y after x gains at
   least as much per unit of mass as adding x:
     [g(S + x) - g(S)] / q(x) <= [g(S + x + y) - g(S + x)] / q(y)   (universe U) *)
Theorem marginal_gain_increases k (S U : {set T}) x y :
  S \subset U -> x \in U -> y \in U -> x \notin S -> y \notin S -> x != y ->
  0 < q x -> 0 < q y ->
  q y * dg k x S U <= q x * dg k y (x |: S) U.
Proof.
elim: k S U => [|k IH] S U SU xU yU xS yS xy qx0 qy0.
  by rewrite /dg /= !subrr !mulr0.
have Upos : 0 < qm U.
  apply: lt_le_trans qx0 _.
  have h := @qm_sub [set x] U; rewrite /qm big_set1 in h; apply: h.
  by rewrite sub1set.
have U0 : qm U != 0 by rewrite gt_eqF.
have xyS : y \notin x |: S by rewrite !inE negb_or eq_sym xy.
rewrite -(ler_pmul2l Upos) [qm U * (q y * _)]mulrCA [qm U * (q x * _)]mulrCA.
rewrite !dg_decomp // big_setU1 //= setU1K //.
set e := g k S (U :\ x).
set ha := g k (x |: S) (U :\ y).
set Sig1 := \sum_(z in S) _.
set Sig2 := \sum_(z in S) _.
(* the sums, term by term, by induction (universe U \ z) *)
have hS : q y * Sig1 <= q x * Sig2.
  rewrite /Sig1 /Sig2 !mulr_sumr; apply: ler_sum => z zS.
  have zx : z != x by apply: contraNneq xS => <-.
  have zy : z != y by apply: contraNneq yS => <-.
  rewrite setD1U1C // mulrCA [q x * (q z * _)]mulrCA; apply: ler_wpmul2l => //.
  apply: IH => //; first exact: setSD.
  - by rewrite !inE eq_sym zx.
  - by rewrite !inE eq_sym zy.
  - by rewrite !inE negb_and xS orbT.
  - by rewrite !inE negb_and yS orbT.
(* the first draws: (q x + q y) e <= q y h_a + q x h_b *)
have eha : e <= ha.
  pose V := U :\ x :\ y.
  have SV : S \subset V.
    apply/subsetP => t tS.
    have ty : t != y by apply: contraNneq yS => <-.
    have tx : t != x by apply: contraNneq xS => <-.
    by rewrite !inE ty tx (subsetP SU).
  have xV : x \notin V by rewrite !inE eqxx andbF.
  have yV : y \notin V by rewrite !inE eqxx.
  have Ux : U :\ x = y |: V by rewrite setD1K // !inE eq_sym xy.
  have Uy : U :\ y = x |: V.
    rewrite -[U :\ y](setD1K (_ : x \in U :\ y)) ?inE ?xy //.
    by congr (_ |: _); apply/setP => t; rewrite !inE andbCA.
  rewrite /e /ha Ux Uy; apply: le_trans (g_addU _ SV yV) (g_addSU _ SV xV).
have ehb : e <= g k (y |: S) (U :\ x) by apply: g_monoS; apply: subsetUr.
rewrite mulrDr [X in _ <= X]mulrDr [q x * (_ + _)]mulrDr addrA ler_add //.
rewrite [q y * (q x * e)]mulrCA -mulrDr; apply: ler_wpmul2l; first exact: ltW.
apply: le_trans (_ : q y * ha <= _); first by apply: ler_wpmul2l; [exact: ltW|].
rewrite ler_addl; apply: mulr_ge0; first exact: ltW.
by rewrite /dg subr_ge0.
Qed.

End WithoutReplacement.

Section SortedPrefixesWithout.

Variables (R : realFieldType) (n k : nat) (p q : 'I_n -> R).
Hypotheses (p_ge0 : forall i, 0 <= p i) (q_ge0 : forall i, 0 <= q i).
(* the tokens are sorted by p/q ascending, the tokens with q = 0 < p last *)
Hypothesis sorted : forall i j : 'I_n, (i < j)%N -> p i * q j <= p j * q i.

(* D_without(set \subset S) for WithoutReplacement(q, k) *)
Definition Dwor (S : {set 'I_n}) := g q k S setT.

(* the value of S in (star) for k drafts without replacement *)
Definition wor_value (S : {set 'I_n}) := \sum_(i in S) p i + 1 - Dwor S.

Lemma wor_exchange (S : {set 'I_n}) (x y : 'I_n) :
  x \notin S -> y \in S -> (x < y)%N ->
  (p x <= Dwor (x |: S) - Dwor S) || (Dwor S - Dwor (S :\ y) <= p y).
Proof.
move=> xS yS xy.
have yS' : y \notin S :\ y by rewrite !inE eqxx.
have SyE : y |: (S :\ y) = S by rewrite setD1K.
have [b0|b0] := eqVneq (q y) 0.
  by apply/orP; right; rewrite /Dwor -{1}SyE g_add0 // subrr p_ge0.
have qy0 : 0 < q y by rewrite lt_def b0 q_ge0.
have [a0|a0] := eqVneq (q x) 0.
  have := sorted xy; rewrite a0 mulr0 => h.
  have : p x <= 0 by rewrite -(ler_pmul2r qy0) mul0r.
  by rewrite /Dwor g_add0 // subrr => ->.
have qx0 : 0 < q x by rewrite lt_def a0 q_ge0.
apply: (@exchange_aux _ _ _ (q x) (q y)) => //; first exact: sorted xy.
have xS' : x \notin S :\ y by rewrite !inE negb_and xS orbT.
have := @marginal_gain_increases R _ q q_ge0 k (S :\ y) setT y x (subsetT _) (in_setT _)
  (in_setT _) yS' xS' _ qy0 qx0.
rewrite /dg SyE /Dwor [q x * _]mulrC [q y * _]mulrC; apply.
by rewrite neq_ltn xy orbT.
Qed.

(* docs/theory.md, Theorem 2.7: for WithoutReplacement(q, k), the minimum of (star)
   over all 2^n token sets is attained at one of the n + 1 prefixes of the p/q order:
     min over S of p(S) + 1 - D_without(set \subset S)
       = min over j = 0..n of P_j + 1 - D_without(set \subset S_j). *)
Theorem wor_sorted_prefixes_min :
  exists j : 'I_n.+1, forall S, wor_value (prefix n j) <= wor_value S.
Proof. exact: (prefix_exchange_min (G := Dwor) wor_exchange). Qed.

End SortedPrefixesWithout.

Print Assumptions g_addSU.
Print Assumptions marginal_gain_increases.
Print Assumptions wor_sorted_prefixes_min.
